module github.com/scalable-go/chans

go 1.24.0

require (
	github.com/anishathalye/porcupine v1.3.1
	go.uber.org/goleak v1.3.0
	golang.org/x/perf v0.0.0-20250813145418-2f7363a06fe1
	golang.org/x/sys v0.41.0
	golang.org/x/term v0.40.0
)

require github.com/aclements/go-moremath v0.0.0-20210112150236-f10218a38794 // indirect
