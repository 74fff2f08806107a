$ORIGIN apps.example.com.
$TTL 3600
apps.example.com. 3600 IN SOA ns1.example.com. hostmaster.apps.example.com. 1 300 60 1209600 60 ; content sha256:bd52c7666158d0c3a7eb4783cffa538d7a844ec1157842bab27a946510777f20
apps.example.com. 3600 IN NS ns1.example.com.
apps.example.com. 3600 IN TXT "managed by external-dns and bind-fn"
api.apps.example.com. 3600 IN CNAME shop.apps.example.com.
shop.apps.example.com. 60 IN A 198.51.100.120
shop.apps.example.com. 60 IN A 198.51.100.121
