module example.com/fleet/worker

go 1.21

require github.com/rs/zerolog v1.30.0
