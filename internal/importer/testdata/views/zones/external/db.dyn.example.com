$TTL 300
@	IN SOA ns1.example.com. hostmaster.example.com. 5 3600 600 1209600 300
	IN NS	ns1.example.com.
host1	IN A	198.51.100.101
host2	IN A	198.51.100.102
