// Package simconfigtest writes realistic Accel-Sim tested-config directories
// for tests: excerpts of the real SM90_H100, SM86_RTX3070 and SM7_QV100
// gpgpusim.config and trace.config files, comments and all, and the side
// files a gpgpusim.config names (SM6_TITANX's interconnect file), kept in
// samples/sim-configs (which the quickstart uses too).
package simconfigtest
