// Package app is Cascade's wiring: [Run] takes a finished [Config] and
// starts a server from the other packages — the database (db), the event
// broker (events), the sample trace (samples), the post-processor
// (postproc) and the trace state machine it and the bucket scanner
// (scanner) report to (tracestate), the run manager with its executor,
// which this package alone picks (runs/local, or runs/slurmexec given the
// Slurm settings, slurm.Config, as they came), the S3 endpoint (s3gw), the
// disk meter (disk), the metrics registry (metrics) and one HTTP server
// for the GraphQL API (graph, resolvers), the web UI, /metrics, the health
// checks and, when asked, Go's profiles. [Main.Close] stops them.
//
// Run reads top-down as its phases (app.go): listen (listenAndServe),
// open the store (openStore: migrate, seed), build the services
// (buildServices: every background part, none started; a new service is
// a field of services and a few lines there), start the S3 endpoint,
// build the handler (buildHandler: the API, /metrics' sources, the mux),
// and start (start: the services' goroutines, then the front handler
// opens). A phase that fails stops what the earlier ones started.
//
// Beyond the order things start and stop in, it keeps only the server's
// edges: the listener, which without an access token binds loopback
// addresses only unless Config.AllowRemote (listen.go), TLS, and the
// front handler that answers /healthz and /metrics from the moment it
// listens and 503 elsewhere until the server is ready (health.go). It
// reads no flag or environment variable: cmd/cascade parses those into
// the Config (config.go), and tests (testkit/servertest) build one
// directly.
package app
