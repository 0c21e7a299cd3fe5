// Package registry is the one process-local table of objects by id: how a pipeline's steps,
// running as workers inside the launching process (Prism, a portable runner in LOOPBACK
// mode), find an object that process made and cannot travel inside the pipeline graph (a
// Pub/Sub run's counts and drain switch, a state capture, a step's table of jobs).
//
// # Invariants
//
//   - An id names one object for as long as it is registered: Add draws a new random id,
//     never one in use; Acquire shares one object among the holders of a name.
//   - Nothing outlives its holders: Remove drops an object at once, Release drops a shared
//     one with its last reference. A lookup of an id not registered (empty, removed, or made
//     in another process) finds nothing and is not an error.
//   - Safe for concurrent use; the zero Registry is empty and ready.
package registry
