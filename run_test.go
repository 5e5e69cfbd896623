package cascade_test

import (
	"testing"

	"github.com/cascade-sim/cascade"
)

// TestRunKernelAPIFields: the API's kernelId is 0 and its launchUid null
// when the simulator's log did not give them.
func TestRunKernelAPIFields(t *testing.T) {
	known := cascade.RunKernel{KernelID: cascade.Ptr(7), LaunchUID: 3}
	if known.KernelIDOrZero() != 7 || cascade.Deref(known.KnownLaunchUID()) != 3 {
		t.Errorf("known: %d, %v", known.KernelIDOrZero(), known.KnownLaunchUID())
	}
	var unknown cascade.RunKernel
	if unknown.KernelIDOrZero() != 0 || unknown.KnownLaunchUID() != nil {
		t.Errorf("unknown: %d, %v", unknown.KernelIDOrZero(), unknown.KnownLaunchUID())
	}
}
