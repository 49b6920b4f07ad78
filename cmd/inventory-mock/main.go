// Command inventory-mock serves the Pet Store Inventory contract as a
// stateful mock: real bearer keys, the contract's Error body on every error,
// request validation against the spec, and writes that later reads see;
// with controls for frontend teams (Prefer, sessions, latency and faults, a
// request journal) under /__admin/.
//
//	go run ./cmd/inventory-mock
//
// starts it on 127.0.0.1:8080 with the embedded spec and fixtures. Every
// setting flag can also be set from the environment; see --help.
package main

import "github.com/petstore/inventory-kit/cmd/internal/cli"

func main() { cli.Main("inventory-mock", run) }
