package main

import "net/http"

// uiHandler serves the web UI; nil until the frontend is wired in.
func uiHandler() http.Handler { return nil }
