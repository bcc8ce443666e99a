# Site settings for this build host (copied from config.mk.example).
PREFIX = /opt/tally
