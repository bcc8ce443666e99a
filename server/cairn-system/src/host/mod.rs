//! The tools over the host cairn runs on: OS, CPU, memory, disks, processes, ports, interfaces,
//! DNS, environment names, programs on `PATH` and log files.
