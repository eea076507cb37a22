module parkbench
go 1.24
