package accelsim

import (
	"os"
	"path/filepath"
)

// looksLikeCheckout reports whether dir has an Accel-Sim checkout's shape:
// a gpu-simulator/ folder with the simulator, its trace configs or
// GPGPU-Sim in it.
func looksLikeCheckout(dir string) bool {
	path := func(rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }
	if !isDir(path("gpu-simulator")) {
		return false
	}
	_, err := os.Stat(path(BinaryPath))
	return err == nil || isDir(path(TraceConfigsPath)) || isDir(path("gpu-simulator/gpgpu-sim"))
}

// checkoutAbove returns the nearest of dir's parents, up to three levels
// up, that looks like a checkout while dir does not: dir was given one
// level too deep (its gpu-simulator/ folder, say). "" when there is none.
func checkoutAbove(dir string) string {
	if looksLikeCheckout(dir) {
		return ""
	}
	for i, d := 0, dir; i < 3; i++ {
		up := filepath.Dir(d)
		if up == d {
			break
		}
		if looksLikeCheckout(up) {
			return up
		}
		d = up
	}
	return ""
}
