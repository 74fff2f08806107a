$ORIGIN example.com.
$TTL 3600
example.com. 3600 IN SOA ns1.example.com. hostmaster.example.com. 1 300 60 1209600 60
example.com. 3600 IN A 192.0.2.10
example.com. 3600 IN NS ns1.example.com.
intranet.example.com. 3600 IN A 192.0.2.20
ns1.example.com. 3600 IN A 192.0.2.53
www.example.com. 3600 IN A 192.0.2.10
