module serverbench/contestants/go

go 1.26.8
