"""`archcost serve`, the playground: a local HTTP server (app), what it may read (library), the compiler in a
process of its own (worker), the page's requests answered from the Python API (requests, session, diagram,
plots), and the page with its vendored libraries (static/). docs/playground.md says what the page does."""
