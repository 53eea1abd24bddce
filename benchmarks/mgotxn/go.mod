module github.com/consistency-kit/benchmarks/mgotxn

go 1.26.0

require github.com/globalsign/mgo v0.0.0-20181015135952-eeefdecb41b8

require (
	golang.org/x/net v0.62.0 // indirect
	gopkg.in/check.v1 v1.0.0-20201130134442-10cb98267c6c // indirect
	gopkg.in/tomb.v2 v2.0.0-20161208151619-d5d1b5820637 // indirect
)
