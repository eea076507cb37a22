module github.com/scalable-go/chans

go 1.24.0

require (
	github.com/anishathalye/porcupine v1.3.1 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	golang.org/x/perf v0.0.0-20250813145418-2f7363a06fe1 // indirect
	golang.org/x/sync v0.19.0 // indirect
	golang.org/x/sys v0.41.0 // indirect
)
