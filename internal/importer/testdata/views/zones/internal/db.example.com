$TTL 3600
@	IN SOA ns1.example.com. hostmaster.example.com. ( 2024010101 3600 600 1209600 300 )
	IN NS	ns1.example.com.
@	IN A	192.0.2.10
ns1	IN A	192.0.2.53
www	IN A	192.0.2.10
intranet 300 IN A 192.0.2.20
