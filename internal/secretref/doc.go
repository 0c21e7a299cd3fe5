// Package secretref is the one resolver of secret references: env:VAR (an environment
// variable), file:PATH (a file) and gcpsm:projects/P/secrets/S/versions/V (Google Cloud
// Secret Manager, through cloud.google.com/go/secretmanager). The model API key (--api_key),
// the signing keyring (--keyring) and the effector's keyring are given as references;
// intent.LoadKeyring, provider.LoadKey and the command line's checks parse (Parse, Check) and
// read (Resolve, Read) them here, and only word the errors for what they read.
//
// Invariants:
//   - One grammar: a reference is a scheme (env, file, gcpsm), a colon and a non-empty rest;
//     Parse is the only parser of it, Check the only checker of a gcpsm: resource name.
//   - A gcpsm: reference is read where the secret is used (on each worker, at setup) and
//     cached in the process for its life: one read per reference per process, whatever
//     number of steps and bundles use it. Failed reads are not cached. env: and file: are read
//     at each Resolve.
//   - A secret's bytes never appear in an error, a log line or a String method: errors name
//     the reference (a variable name, a path, a resource name) and a stable code; VarName
//     never repeats an argument that is no variable name.
//   - Not found and permission denied are their own codes (CodeNotFound,
//     CodePermissionDenied) and fail the step's setup, so the run stops with one clear
//     message instead of dead-lettering every key; a payload whose CRC32C does not match is
//     CodeCorrupt; an unset variable is CodeNotSet, an unreadable file CodeUnreadable.
//   - The endpoint is Secret Manager's unless EndpointEnv (BEAMAGENTS_SECRETMANAGER_HOST)
//     names a host:port, which is then dialled in plaintext without credentials, as the
//     Pub/Sub client does with PUBSUB_EMULATOR_HOST: for tests and local servers.
package secretref
