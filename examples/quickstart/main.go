// Command quickstart is a complete agent in its own module: the proposal schema in proto/,
// its generated bindings in quickstartpb/, the agent in agent.go, and this main, which gives
// it every beamagents command (run, schema, inspect, intent, …). Beam ships this binary to
// its workers, so it is also how the agent reaches Dataflow or Flink.
package main

import "github.com/beamagents/beamagents/cli"

func main() { cli.Main() }
