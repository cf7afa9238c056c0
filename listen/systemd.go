package listen

import (
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
)

// sdListenFDsStart is the first file descriptor systemd passes
// (SD_LISTEN_FDS_START).
const sdListenFDsStart = 3

// Systemd returns the listening sockets passed by systemd socket
// activation (sd_listen_fds(3)): LISTEN_PID names this process and
// LISTEN_FDS counts the descriptors from 3 up; LISTEN_FDNAMES, when set,
// names them (FileDescriptorName= in the .socket unit). It unsets the
// three variables, so that child processes do not take the sockets for
// theirs, and returns nil, nil when the process was not socket-activated.
func Systemd() (listeners []net.Listener, names []string, err error) {
	pid, fds := os.Getenv("LISTEN_PID"), os.Getenv("LISTEN_FDS")
	namesEnv := os.Getenv("LISTEN_FDNAMES")
	os.Unsetenv("LISTEN_PID")
	os.Unsetenv("LISTEN_FDS")
	os.Unsetenv("LISTEN_FDNAMES")
	if pid == "" || fds == "" {
		return nil, nil, nil
	}
	if p, err := strconv.Atoi(pid); err != nil || p != os.Getpid() {
		return nil, nil, nil // meant for another process
	}
	n, err := strconv.Atoi(fds)
	if err != nil || n < 0 || n > 1024 {
		return nil, nil, errors.New("listen: bad LISTEN_FDS " + strconv.Quote(fds))
	}
	if namesEnv != "" {
		names = strings.Split(namesEnv, ":")
	}
	names = append(names, make([]string, max(0, n-len(names)))...)[:n]
	listeners, err = fileListeners(sdListenFDsStart, names)
	return listeners, names, err
}

// fileListeners turns the inherited descriptors start, start+1, ... (one
// per name) into listeners, closing the descriptors (net.FileListener
// keeps its own copy).
func fileListeners(start int, names []string) ([]net.Listener, error) {
	var lns []net.Listener
	for i, name := range names {
		fd := start + i
		if err := inheritFD(fd); err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, err
		}
		f := os.NewFile(uintptr(fd), name)
		ln, err := net.FileListener(f)
		f.Close()
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, err
		}
		lns = append(lns, ln)
	}
	return lns, nil
}
