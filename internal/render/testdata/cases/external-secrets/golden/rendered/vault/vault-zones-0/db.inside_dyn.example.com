$ORIGIN dyn.example.com.
$TTL 3600
dyn.example.com. 3600 IN SOA ns1.example.com. hostmaster.dyn.example.com. 1 300 60 1209600 60 ; content sha256:7b27c3cfe02d8063287c922b7e9bc5e23af3e61755bb09d0a9a2d2fe88ce6d43
dyn.example.com. 3600 IN NS ns1.example.com.
www.dyn.example.com. 3600 IN A 10.1.1.1
