module github.com/riptide-http/riptide

go 1.26
