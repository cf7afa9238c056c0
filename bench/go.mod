module github.com/riptide-http/riptide/bench

go 1.26.0

replace github.com/riptide-http/riptide => ../

require (
	github.com/go-chi/chi/v5 v5.5.0
	github.com/valyala/fasthttp v1.74.0
)

require (
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
)

require (
	codeberg.org/go-fonts/liberation v0.5.0 // indirect
	codeberg.org/go-latex/latex v0.2.0 // indirect
	codeberg.org/go-pdf/fpdf v0.11.1 // indirect
	git.sr.ht/~sbinet/gg v0.7.0 // indirect
	github.com/ajstarks/svgo v0.0.0-20211024235047-1546f124cd8b // indirect
	github.com/golang/freetype v0.0.0-20170609003504-e2365dfdc4a0 // indirect
	github.com/klauspost/compress v1.20.0 // indirect
	github.com/molecule-man/go-brrr v1.0.1 // indirect
	github.com/riptide-http/riptide v0.0.0-00010101000000-000000000000
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	golang.org/x/image v0.30.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	gonum.org/v1/plot v0.17.0
)
