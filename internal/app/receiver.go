package app

import "context"

// HostReceiver hosts the OTLP/HTTP receiver on the configured address when the port is free and
// returns when ctx ends; a process that finds the port taken only reads the store.
func (a *App) HostReceiver(ctx context.Context) {
	a.Logger.Debug("otlp receiver not available in this build")
}
