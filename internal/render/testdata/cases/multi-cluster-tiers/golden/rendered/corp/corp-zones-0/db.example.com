$ORIGIN example.com.
$TTL 3600
example.com. 3600 IN SOA ns1.example.net. hostmaster.example.com. 1 300 60 1209600 60
example.com. 3600 IN NS ns1.example.net.
www.example.com. 3600 IN A 192.0.2.80
