//! The Docker engine through bollard: containers, images, networks, volumes and Compose projects.
