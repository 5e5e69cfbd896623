package cascade

// DiskUsage is the data directory's disk use, as package disk measures it.
type DiskUsage struct {
	BudgetBytes    int64 // from --disk-gib; 0 when none was given
	UsedBytes      int64 // every trace's files
	FreeBytes      int64 // free on the data directory's file system
	ProjectedBytes int64 // what the traces will take once processed
	// Warning says when the projection passes the budget or the free
	// space; "" otherwise.
	Warning string
}
