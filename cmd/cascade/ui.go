package main

import (
	"net/http"

	"github.com/99designs/gqlgen/graphql/playground"

	"github.com/cascade-sim/cascade/frontend"
)

// uiHandler serves the embedded web UI and its bundled GraphiQL at
// /playground. A binary built without the UI serves a page saying how to
// build it, and gqlgen's playground (which loads from a CDN) instead.
func uiHandler() http.Handler {
	if frontend.Built() {
		return frontend.Handler()
	}
	mux := http.NewServeMux()
	mux.Handle("/playground", playground.Handler("Cascade", "/graphql"))
	mux.Handle("/", frontend.Handler())
	return mux
}
