module hipobject.org/go

go 1.19

require github.com/minio/minio-go/v7 v7.0.46
