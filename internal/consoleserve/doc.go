// Package consoleserve is how the commands that serve the web console (console, effector
// --console, dev) set it up from their flags and stop it: the acting user's identity from
// the approver flags, credential lines read from a reference, the allowed host names, the
// loopback test that decides whether reading needs an identity, and a graceful shutdown.
//
// Invariants:
//   - Credentials are read only from a local reference (env:VAR or file:PATH, the file at
//     most 16 MiB); a value that is neither is refused, never taken as the secrets
//     themselves, and an error never carries a secret.
//   - A reference holding no credential line is an error: a console never starts with an
//     empty user list that would lock everyone out, or let everyone in.
//   - Shutdown answers the requests in flight (a decision that completes a run) before it
//     closes, for at most five seconds.
package consoleserve
