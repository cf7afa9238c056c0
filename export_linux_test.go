package riptide

// WorkersSpawned returns how many worker goroutines the event-loop engine
// has started for s's listeners that are still served.
func (s *Server) WorkersSpawned() int64 {
	s.el.mu.Lock()
	defer s.el.mu.Unlock()
	var n int64
	for g := range s.el.groups {
		n += g.Spawned()
	}
	return n
}
