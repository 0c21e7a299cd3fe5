// Command example is the beamagents command line with the devices example written with
// langchaingo registered as devices-langchaingo:
//
//	go build ./example && ./example run --agent devices-langchaingo --input readings.jsonl --output_dir out --keyring file:ring.json
package main

import (
	_ "github.com/beamagents/beamagents/adapters/langchaingo/example/lcdevices"
	"github.com/beamagents/beamagents/cli"
)

func main() { cli.Main() }
