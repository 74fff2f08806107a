$ORIGIN secure.example.com.
$TTL 3600
secure.example.com. 3600 IN SOA ns1.example.com. hostmaster.secure.example.com. 1 300 60 1209600 60 ; content sha256:35ffd75c6c2434284dbc6a4421c64d0e7e1df59c26ac4c83c45dfd373f387045
secure.example.com. 3600 IN NS ns1.example.com.
www.secure.example.com. 3600 IN A 198.51.100.80
