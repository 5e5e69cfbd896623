package runs

import "time"

// SetRetry shortens how m's finish tries again when the database fails;
// call it before Run.
func (m *Manager) SetRetry(first, most, kernels time.Duration) {
	m.retryPolicy = retryPolicy{first: first, most: most, kernels: kernels}
}
