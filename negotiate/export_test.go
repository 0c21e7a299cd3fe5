package negotiate

// DialectDigest exposes the producer digest of the model boundary to the receipt tests.
var DialectDigest = dialectDigest
