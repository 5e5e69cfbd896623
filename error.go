package cascade

import (
	"errors"
	"fmt"
)

// Error codes, as the API reports them in extensions.code.
const (
	ENOTFOUND     = "NOT_FOUND"
	EINVALID      = "BAD_USER_INPUT"
	ECONFLICT     = "CONFLICT"
	EUNAUTHORIZED = "UNAUTHENTICATED"
	EFORBIDDEN    = "FORBIDDEN"
	EINTERNAL     = "INTERNAL"
)

// Error is an error a user can act on: a code from the list above and a
// message fit to show them.
type Error struct {
	Code    string
	Message string
}

// Error implements error.
func (e *Error) Error() string { return fmt.Sprintf("cascade: %s: %s", e.Code, e.Message) }

// Errorf returns an *Error with the given code and formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the *Error in err's chain, or EINTERNAL for
// anything else (nil gives "").
func ErrorCode(err error) string {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the message of the *Error in err's chain, or a
// generic text for anything else, which may hold internals not fit to show.
func ErrorMessage(err error) string {
	var e *Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return e.Message
	}
	return "internal error"
}

// ErrUnchanged, returned by the callback of a store's read-modify-write
// update (UpdateTrace, UpdateRun), leaves the row as it was: the update then
// reports saved == false and no error. It lives here, not in db, so the
// packages that update state depend on their own Store interfaces only.
var ErrUnchanged = errors.New("cascade: unchanged")
