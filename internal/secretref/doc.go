// Package secretref resolves secret references of the form
// gcpsm:projects/P/secrets/S/versions/V through Google Cloud Secret Manager
// (cloud.google.com/go/secretmanager): the model API key (--api_key), the signing keyring
// (--keyring) and the effector's keyring accept them beside env:VAR and file:PATH.
//
// Invariants:
//   - A reference is read where the secret is used (on each worker, at setup) and cached in
//     the process for its life: one read per reference per process, whatever number of
//     steps and bundles use it. Failed reads are not cached.
//   - A secret's bytes never appear in an error, a log line or a String method: errors name
//     the reference (a resource name) and a stable code.
//   - Not found and permission denied are their own codes (CodeNotFound,
//     CodePermissionDenied) and fail the step's setup, so the run stops with one clear
//     message instead of dead-lettering every key; a payload whose CRC32C does not match is
//     CodeCorrupt.
//   - The endpoint is Secret Manager's unless EndpointEnv (BEAMAGENTS_SECRETMANAGER_HOST)
//     names a host:port, which is then dialled in plaintext without credentials, as the
//     Pub/Sub client does with PUBSUB_EMULATOR_HOST: for tests and local servers.
package secretref
