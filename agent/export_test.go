package agent

// Exported for the tests of package agent_test.
var RenderFinal = renderFinal
