//go:build !unix

package static

import "os"

const openFlags = os.O_RDONLY

// colonOK is false off Unix, where ':' names drives and streams.
const colonOK = false
