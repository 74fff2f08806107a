$ORIGIN example.com.
$TTL 3600
example.com. 3600 IN SOA ns1.example.net. hostmaster.example.com. 1 300 60 1209600 60 ; content sha256:b6b41318eb3f4a6cabb9638e019f8871d62fd35c983a573258a2e9a53cc85f41
example.com. 3600 IN NS ns1.example.net.
www.example.com. 3600 IN A 192.0.2.80
