module example.com/fleet/api

go 1.22

require (
	github.com/go-chi/chi/v5 v5.0.12
	github.com/rs/zerolog v1.31.0
)
