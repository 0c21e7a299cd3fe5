//go:build !unix

package rehearse_test

import "time"

var started = time.Now()

// cpuTime is wall time where getrusage is missing.
func cpuTime() time.Duration { return time.Since(started) }
