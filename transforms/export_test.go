package transforms

// DecodeEnvelope is decodeEnvelope, for the differential tests.
var DecodeEnvelope = decodeEnvelope
