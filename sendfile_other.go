//go:build !linux

package riptide

import "os"

// sendfileState is empty: SendFile copies off Linux.
type sendfileState struct{}

func (s *sendfileState) reset() {}

// canSendfile is false: SendFile copies through ReadAt and Write.
func (c *conn) canSendfile() bool { return false }

func (c *conn) sendFileAt(*os.File, int64, int64) (int64, bool, error) { return 0, false, nil }

// flushMore is flush: there is no sendfile to join.
func (c *conn) flushMore() error { return c.flush() }
