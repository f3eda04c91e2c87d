package goapp_test

import "github.com/runlens/runlens/internal/e2e/corpus/answers"

// The answers, as the corpus tests read them (package answers).
type (
	appStatus    = answers.AppStatus
	errorGroup   = answers.ErrorGroup
	recentErrors = answers.RecentErrors
	run          = answers.Run
	runList      = answers.RunList
	runDetail    = answers.RunDetail
	dbOperation  = answers.DBOperation
	dbReport     = answers.DBReport
)
