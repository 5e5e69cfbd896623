// Package events fans committed changes out to subscribers in memory.
//
// It owns only its subscriber set: it stores nothing and never queries. A
// publisher publishes after its database commit returned nil, with a value
// copy of the committed row, so no subscriber sees a change that never was
// or shares a pointer with anyone.
package events
