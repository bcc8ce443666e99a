module example.com/listing

go 1.19
