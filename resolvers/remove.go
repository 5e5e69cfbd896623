package resolvers

import "time"

// removeWait is how long removeTrace waits for the scanner to take the
// trace out of the database once its files are gone.
var removeWait = 10 * time.Second
