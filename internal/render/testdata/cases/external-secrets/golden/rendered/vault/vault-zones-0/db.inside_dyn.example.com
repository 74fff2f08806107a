$ORIGIN dyn.example.com.
$TTL 3600
dyn.example.com.	3600	IN	SOA	ns1.example.com. hostmaster.dyn.example.com. 1 300 60 1209600 60
dyn.example.com.	3600	IN	NS	ns1.example.com.
www.dyn.example.com.	3600	IN	A	10.1.1.1
