// Package goldenv1 holds the frozen golden corpus of state_schema_version 1 and the builders
// that define each blob's expected value.
//
// FROZEN: the .binpb files and the values in this package never change. A new field gets a new
// blob through a new case; a new schema version gets a new directory.
//
// Common values: entity key "customer-0042"; times around 2026-01-01T00:00:00Z
// (1767225600000 ms); trace id 00 01 … 0f (16 bytes); span ids 10 11 … 17 and 20 21 … 27
// (8 bytes). Signed intents use [SigningKey] under key id [SigningKeyID].
package goldenv1
