module github.com/riptide-http/riptide/ecosystem

go 1.26.0

replace github.com/riptide-http/riptide => ../

require (
	github.com/go-chi/chi/v5 v5.5.0
	github.com/gorilla/mux v1.8.1
	github.com/gorilla/websocket v1.5.3
	github.com/riptide-http/riptide v0.0.0-00010101000000-000000000000
)

require (
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
)
