// Package kernellisttest writes processed trace directories (a kernelslist.g
// and the .traceg files it names) for the tests of packages that read them.
package kernellisttest
