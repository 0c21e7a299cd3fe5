// Package testkit holds the test kits of the module, one package each: loopback model
// servers, real services, an OTLP receiver, traffic generators, test-only schemas, golden
// files. They may import the whole stack; no package outside internal/testkit imports them
// except from its tests, so no kit is ever linked into a library or a binary.
package testkit
